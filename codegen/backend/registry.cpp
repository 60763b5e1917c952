// The one place that maps a Device to its backend: the only file that names every backend.
#include "codegen/backend/backend.h"
#include "codegen/cpu/backend.h"
#include "codegen/cuda/backend.h"

namespace lf::backend {

const Backend& backend_for(Device device) {
  switch (device.kind()) {  // exhaustive: a new Device::Kind without a backend does not compile
    case Device::Kind::CPU: return cpu::backend();
    case Device::Kind::CUDA: return cuda::backend();
  }
  throw Error("no backend for device " + device.str());
}

}  // namespace lf::backend
