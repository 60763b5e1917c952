// The one public header of LazyFuse: #include <lazyfuse/lazyfuse.h>.
#pragma once

#include "lazyfuse/autograd.h"
#include "lazyfuse/interop.h"
#include "lazyfuse/ops.h"
#include "lazyfuse/runtime.h"
#include "lazyfuse/tensor.h"
#include "lazyfuse/types.h"
