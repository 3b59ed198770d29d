#!/usr/bin/env bash
# Checks that the C++ and CUDA sources are formatted as .clang-format says (the style of the code,
# made explicit): clang-format --dry-run -Werror over src/, kernels/, tests/, bench/ and examples/,
# which names each file and line that differs. `scripts/check-format.sh --fix` formats them instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files 'src/*' 'kernels/*' 'tests/*' 'bench/*' 'examples/*' | grep -E '\.(cpp|h|cu|cuh)$')
case "${1:-}" in
  "") clang-format --dry-run -Werror "${files[@]}" && echo "check-format: ${#files[@]} files formatted as .clang-format says" ;;
  --fix) clang-format -i "${files[@]}" ;;
  *) echo "check-format: unknown argument '$1' (usage: scripts/check-format.sh [--fix])" >&2; exit 2 ;;
esac
