// load_plugin and find_plugin on real libraries built by this build (tests/plugins/libraries):
// a plugin that loads, one built against another kernel API, two whose names are taken by built-in
// kernels, a library that is no plugin, and the ways a plugin is found by name and by path.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/digest.h"
#include "kernels/kernel.h"
#include "plugins/plugins.h"
#include "support/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using ks::PluginError;

ks::Registry builtin_registry() {
  ks::Registry registry;
  ks::register_builtin_kernels(registry);
  return registry;
}

// Every kernel and implementation of a registry with where it comes from, one line each.
std::vector<std::string> contents(const ks::Registry& registry) {
  std::vector<std::string> lines;
  for (const ks::KernelSpec& kernel : registry.all()) {
    lines.push_back(kernel.name + " (" + ks::Registry::describe(kernel.origin) + ")");
    for (const ks::ImplementationSpec& implementation : kernel.implementations)
      lines.push_back(kernel.name + "/" + implementation.name + " (" + ks::Registry::describe(implementation.origin) +
                      ")");
  }
  return lines;
}

std::string file_sha256(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return ks::sha256_hex(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
}

// The message load_plugin refuses `library` with, checking that the registry did not change.
std::string refusal(const fs::path& library) {
  ks::Registry registry = builtin_registry();
  const std::vector<std::string> before = contents(registry);
  try {
    ks::load_plugin(library, registry);
  } catch (const PluginError& error) {
    EXPECT_EQ(contents(registry), before) << "a refused plugin changed the registry";
    return error.what();
  }
  ADD_FAILURE() << library << " was loaded; a refusal was expected";
  return "";
}

// Sets KERNELSWEEP_PLUGIN_PATH for the life of the object.
class PluginPath {
 public:
  explicit PluginPath(const std::string& value) {
    if (const char* old = std::getenv("KERNELSWEEP_PLUGIN_PATH")) old_ = old;
    ::setenv("KERNELSWEEP_PLUGIN_PATH", value.c_str(), 1);
  }
  PluginPath(const PluginPath&) = delete;
  PluginPath& operator=(const PluginPath&) = delete;
  ~PluginPath() {
    if (old_) ::setenv("KERNELSWEEP_PLUGIN_PATH", old_->c_str(), 1);
    else ::unsetenv("KERNELSWEEP_PLUGIN_PATH");
  }

 private:
  std::optional<std::string> old_;
};

TEST(LoadPlugin, RegistersItsKernelsAndImplementationsWithTheirOrigin) {
  ks::Registry registry = builtin_registry();
  const ks::Origin origin = ks::load_plugin(KS_TEST_PLUGIN_GOOD, registry);

  EXPECT_EQ(origin.plugin, "ks_test_plugin_good");
  EXPECT_EQ(origin.version, "1.2.3");
  EXPECT_EQ(origin.library, fs::canonical(KS_TEST_PLUGIN_GOOD).string());
  EXPECT_EQ(origin.sha256, file_sha256(KS_TEST_PLUGIN_GOOD));
  EXPECT_EQ(origin.sha256.size(), 64u);

  const ks::KernelSpec* square = registry.find("test_plugin_square");
  ASSERT_NE(square, nullptr);
  EXPECT_EQ(square->origin.library, origin.library);
  EXPECT_EQ(square->origin.sha256, origin.sha256);
  ASSERT_NE(square->implementation("cpu"), nullptr);
  EXPECT_EQ(square->implementation("cpu")->origin.plugin, "ks_test_plugin_good");

  // The plugin's implementation of a built-in kernel, beside the built-in one.
  const ks::KernelSpec* noop = registry.find("noop");
  ASSERT_NE(noop, nullptr);
  EXPECT_TRUE(noop->origin.plugin.empty());
  ASSERT_NE(noop->implementation("from_plugin"), nullptr);
  EXPECT_EQ(noop->implementation("from_plugin")->origin.version, "1.2.3");
  ASSERT_NE(noop->implementation("cpu"), nullptr);
  EXPECT_TRUE(noop->implementation("cpu")->origin.plugin.empty());

  // Its code runs from the library.
  auto instance = square->instantiate("cpu", {{"n", 100}});
  const ks::BoundMode bound = square->bind(*instance, "forward");
  bound.run();
  const ks::CheckResult check = bound.check();
  EXPECT_TRUE(check.passed) << check.detail;
}

TEST(LoadPlugin, LoadingTheSameLibraryAgainChangesNothing) {
  ks::Registry registry = builtin_registry();
  const ks::Origin first = ks::load_plugin(KS_TEST_PLUGIN_GOOD, registry);
  const std::vector<std::string> after_first = contents(registry);

  // Named another way: a relative path with a detour, and a link to it.
  const fs::path dir = ks::testing::fresh_directory("plugin-load-again");
  fs::create_symlink(fs::canonical(KS_TEST_PLUGIN_GOOD), dir / "link.so");
  const fs::path detour = fs::path(KS_TEST_PLUGIN_GOOD).parent_path() / ".." /
                          fs::path(KS_TEST_PLUGIN_GOOD).parent_path().filename() /
                          fs::path(KS_TEST_PLUGIN_GOOD).filename();
  for (const fs::path& library : {fs::path(KS_TEST_PLUGIN_GOOD), detour, dir / "link.so"}) {
    const ks::Origin again = ks::load_plugin(library, registry);
    EXPECT_EQ(again.plugin, first.plugin);
    EXPECT_EQ(again.version, first.version);
    EXPECT_EQ(again.library, first.library);
    EXPECT_EQ(again.sha256, first.sha256);
    EXPECT_EQ(contents(registry), after_first) << library;
  }
}

TEST(LoadPlugin, LoadsIntoEveryRegistryItIsGiven) {
  ks::Registry first = builtin_registry(), second = builtin_registry();
  ks::load_plugin(KS_TEST_PLUGIN_GOOD, first);
  ks::load_plugin(KS_TEST_PLUGIN_GOOD, second);
  EXPECT_NE(second.find("test_plugin_square"), nullptr);
  EXPECT_EQ(contents(first), contents(second));

  ks::Registry empty;  // without the built-in noop, the plugin's noop implementation has no kernel
  EXPECT_THROW(ks::load_plugin(KS_TEST_PLUGIN_GOOD, empty), PluginError);
  EXPECT_TRUE(empty.all().empty());
}

TEST(LoadPlugin, RefusesAnotherKernelApi) {
  const std::string message = refusal(KS_TEST_PLUGIN_OTHER_API);
  const std::string expected = "plugin library " + fs::canonical(KS_TEST_PLUGIN_OTHER_API).string() +
                               ": built against kernel API " + std::to_string(ks::kKernelApiVersion + 1) +
                               "; this kernelsweep has " + std::to_string(ks::kKernelApiVersion) +
                               ": rebuild the plugin against this kernelsweep";
  EXPECT_EQ(message, expected);
}

TEST(LoadPlugin, RefusesAKernelNamedLikeABuiltInOne) {
  const std::string message = refusal(KS_TEST_PLUGIN_BUILTIN_KERNEL);
  EXPECT_EQ(message, "plugin ks_test_plugin_builtin_kernel (" + fs::canonical(KS_TEST_PLUGIN_BUILTIN_KERNEL).string() +
                         ") registers kernel gemm, which is already registered (built in): rename the plugin's "
                         "kernel, or load only one of the two");
}

TEST(LoadPlugin, RefusesAnImplementationNamedLikeABuiltInOne) {
  const std::string message = refusal(KS_TEST_PLUGIN_BUILTIN_IMPLEMENTATION);
  EXPECT_EQ(message, "plugin ks_test_plugin_builtin_implementation (" +
                         fs::canonical(KS_TEST_PLUGIN_BUILTIN_IMPLEMENTATION).string() +
                         ") registers implementation gemm/cpu, which is already registered (built in): rename the "
                         "plugin's implementation");
}

TEST(LoadPlugin, RefusesThePluginOfTheSameNameFromAnotherFile) {
  const fs::path dir = ks::testing::fresh_directory("plugin-copy");
  fs::copy_file(KS_TEST_PLUGIN_GOOD, dir / "libcopy.so");
  ks::Registry registry = builtin_registry();
  const ks::Origin first = ks::load_plugin(KS_TEST_PLUGIN_GOOD, registry);
  const std::vector<std::string> before = contents(registry);
  try {
    ks::load_plugin(dir / "libcopy.so", registry);
    ADD_FAILURE() << "a second copy of a plugin was loaded";
  } catch (const PluginError& error) {
    // This plugin also adds to the built-in noop, so the message is Registry's own, after the plugin.
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("plugin ks_test_plugin_good (" + fs::canonical(dir / "libcopy.so").string() + ") ", 0), 0u)
        << message;
    EXPECT_NE(message.find("kernel test_plugin_square"), std::string::npos) << message;
    EXPECT_NE(message.find(first.library), std::string::npos) << message;
  }
  EXPECT_EQ(contents(registry), before);
}

TEST(LoadPlugin, RefusesALibraryThatIsNoPlugin) {
  EXPECT_EQ(refusal(KS_TEST_LIBRARY_NO_ENTRY),
            fs::canonical(KS_TEST_LIBRARY_NO_ENTRY).string() +
                ": not a kernelsweep plugin (no kernelsweep_plugin_entry): build it with kernelsweep_add_plugin");
}

TEST(LoadPlugin, RefusesAFileThatIsNoLibrary) {
  const fs::path dir = ks::testing::fresh_directory("plugin-not-a-library");
  ks::testing::write_file(dir / "libtext.so", "not an ELF file\n");
  const std::string message = refusal(dir / "libtext.so");
  EXPECT_NE(message.find("plugin library " + fs::canonical(dir / "libtext.so").string() + " cannot be loaded: "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("ldd "), std::string::npos) << message;
}

TEST(LoadPlugin, RefusesAMissingFile) {
  const std::string message = refusal("/nonexistent/libmissing.so");
  EXPECT_EQ(message.rfind("plugin library /nonexistent/libmissing.so: ", 0), 0u) << message;
}

TEST(FindPlugin, FindsANameThroughThePluginPath) {
  const fs::path plugins = fs::path(KS_TEST_PLUGIN_GOOD).parent_path();
  const PluginPath path("/nonexistent::" + plugins.string());
  EXPECT_EQ(ks::find_plugin("ks_test_plugin_good", "/elsewhere"), fs::absolute(KS_TEST_PLUGIN_GOOD).lexically_normal());

  // The library found by name loads like any other.
  ks::Registry registry = builtin_registry();
  const ks::Origin origin = ks::load_plugin(ks::find_plugin("ks_test_plugin_good", "/elsewhere"), registry);
  EXPECT_EQ(origin.plugin, "ks_test_plugin_good");
}

TEST(FindPlugin, TriesLibNameThenNameInEachFolderInTurn) {
  const fs::path dir = ks::testing::fresh_directory("plugin-search-order");
  fs::create_directories(dir / "first");
  fs::create_directories(dir / "second");
  for (const fs::path& file : {dir / "first" / "both.so", dir / "second" / "libboth.so", dir / "second" / "plain.so",
                               dir / "first" / "libpair.so", dir / "first" / "pair.so"})
    ks::testing::write_file(file, "");
  const PluginPath path((dir / "first").string() + ":" + (dir / "second").string());
  EXPECT_EQ(ks::find_plugin("both", "/"), dir / "first" / "both.so");  // the earlier folder wins
  EXPECT_EQ(ks::find_plugin("plain", "/"), dir / "second" / "plain.so");
  EXPECT_EQ(ks::find_plugin("pair", "/"), dir / "first" / "libpair.so");  // libNAME.so before NAME.so
}

TEST(FindPlugin, SaysWhereItLookedWhenANameIsNotFound) {
  const PluginPath path("/nonexistent/a:/nonexistent/b");
  try {
    ks::find_plugin("absent", "/");
    ADD_FAILURE() << "a plugin that does not exist was found";
  } catch (const PluginError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("plugin absent not found: no libabsent.so or absent.so in KERNELSWEEP_PLUGIN_PATH "
                            "(/nonexistent/a, /nonexistent/b) nor in the installed plugin folder ",
                            0),
              0u)
        << message;
    EXPECT_NE(message.find("/kernelsweep/plugins: install it there, add its folder to KERNELSWEEP_PLUGIN_PATH, or "
                           "name its library by path"),
              std::string::npos)
        << message;
  }
}

TEST(FindPlugin, TakesAPathRelativeToTheBase) {
  const fs::path plugins = fs::path(KS_TEST_PLUGIN_GOOD).parent_path();
  const std::string file = fs::path(KS_TEST_PLUGIN_GOOD).filename().string();
  EXPECT_EQ(ks::find_plugin(file, plugins), plugins / file);  // ends in .so: a path
  EXPECT_EQ(ks::find_plugin("./" + file, plugins), plugins / file);
  EXPECT_EQ(ks::find_plugin("../" + plugins.filename().string() + "/" + file, plugins), plugins / file);
  EXPECT_EQ(ks::find_plugin(std::string(KS_TEST_PLUGIN_GOOD), "/elsewhere"), fs::path(KS_TEST_PLUGIN_GOOD));

  try {
    ks::find_plugin("build/libmissing.so", "/nonexistent/sweeps");
    ADD_FAILURE() << "a missing library was found";
  } catch (const PluginError& error) {
    EXPECT_EQ(std::string(error.what()),
              "plugin library /nonexistent/sweeps/build/libmissing.so: no such file (a plugin's path is taken "
              "relative to /nonexistent/sweeps)");
  }
  EXPECT_THROW(ks::find_plugin("", "/"), PluginError);
}

}  // namespace
