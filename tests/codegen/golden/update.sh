#!/usr/bin/env bash
# Rewrites the golden snippets of emitted code (tests/codegen/golden_test.cpp) from the current
# emitters. Run after an intended change in generated code, and commit the files with the change.
#   tests/codegen/golden/update.sh [BUILD_DIR]   (default build; builds codegen_tests first)
set -euo pipefail
cd "$(dirname "$0")/../../.."
build=${1:-build}
cmake --build "$build" --target codegen_tests
LAZYFUSE_CACHE_DIR=off LAZYFUSE_UPDATE_GOLDEN=1 "$build/tests/codegen_tests" --gtest_filter='Canonical/Golden.*' --gtest_brief=1
git status --short tests/codegen/golden
