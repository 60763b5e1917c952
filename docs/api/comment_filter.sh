#!/bin/sh
# Doxygen's INPUT_FILTER for the public headers: their comments are plain `//` lines (the style of
# the code base), which Doxygen ignores. The banner (the comments before #pragma once) becomes the
# file's documentation; past it a comment line becomes `///` (it documents what follows) and a
# comment after code on its line `///<` (it documents that line's declaration).
exec awk '
  !body && /^\/\/ ?/ { sub(/^\/\/ ?/, ""); print (banner++ ? "/// " : "/// @file\n/// ") $0; next }
  /^#pragma once/ { body = 1 }
  body && /^[ \t]*\/\/([ \t]|$)/ { sub(/\/\//, "///") }
  body && /[;,{)][ \t]*\/\/ / { sub(/[ \t]*\/\/ /, "  ///< ") }
  { print }
' "$1"
