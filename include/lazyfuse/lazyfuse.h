// The one public header of LazyFuse: `#include <lazyfuse/lazyfuse.h>`.
#pragma once

#include "lazyfuse/autograd.h"
#include "lazyfuse/complex.h"
#include "lazyfuse/einsum.h"
#include "lazyfuse/fft.h"
#include "lazyfuse/interop.h"
#include "lazyfuse/linalg.h"
#include "lazyfuse/losses.h"
#include "lazyfuse/ops.h"
#include "lazyfuse/optim.h"
#include "lazyfuse/runtime.h"
#include "lazyfuse/tensor.h"
#include "lazyfuse/types.h"
