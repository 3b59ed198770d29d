// A shared library that is not a kernelsweep plugin: it exports no kernelsweep_plugin_entry.
extern "C" __attribute__((visibility("default"))) int ks_test_not_a_plugin() { return 1; }
