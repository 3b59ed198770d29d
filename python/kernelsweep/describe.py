"""`python3 -m kernelsweep.describe MODULE...`: what modules of kernels declare, as one JSON object
on standard output, for the `kernelsweep` command (kernels, validate, plan, run) to know them:

    {"kernels": [{"name", "title", "description", "parameters": [...], "modes", "module", "source",
                  "sha256", "version"}],
     "implementations": [{"kernel", "name", "backend", "help", "module", "source", "sha256", "version"}]}

A module that cannot be imported is one line on standard error, "MODULE: Type: message", and exit
code 2.
"""
from __future__ import annotations

import importlib
import json
import sys

from . import api
from .worker import last_line, source_facts


def describe(modules: list) -> dict:
    kernels, implementations = [], []
    for name in modules:
        module = importlib.import_module(name)
        facts = source_facts(name)
        facts["version"] = str(getattr(module, "__version__", ""))
        declared_kernels, declared_implementations = api.registry.in_module(name)
        kernels += [dict(k.to_json(), **facts) for k in declared_kernels]
        implementations += [dict(i.to_json(), **facts) for i in declared_implementations]
    return {"kernels": kernels, "implementations": implementations}


def main(argv=None) -> int:
    modules = list(sys.argv[1:] if argv is None else argv)
    for name in modules:
        try:
            importlib.import_module(name)
        except BaseException as error:  # noqa: BLE001 - said in one line, whatever it is
            print(f"{name}: {last_line(error)}", file=sys.stderr)
            return 2
    json.dump(describe(modules), sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
