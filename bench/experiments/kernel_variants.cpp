// Times hand-written variants of the chain and sum(x*x) kernels (kernel_variants.cu) through NVRTC and
// the Driver API, against cuMemcpyDtoD (bench/RESULTS.md, "Latest"). Build: g++ -O2 -std=c++17
// kernel_variants.cpp -o kv -ldl; run on the GPU machine: ./kv kernel_variants.cu
#include <dlfcn.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
typedef int CUresult; typedef void* CUmodule; typedef void* CUfunction; typedef void* CUevent; typedef void* CUctx; typedef unsigned long long CUdp;
#define L(lib, name) auto name = (decltype(name##_t))dlsym(lib, #name); if (!name) { printf("no %s\n", #name); return 1; }
int (*cuInit_t)(unsigned); int (*cuDeviceGet_t)(int*, int); int (*cuDevicePrimaryCtxRetain_t)(CUctx*, int); int (*cuCtxSetCurrent_t)(CUctx);
int (*cuModuleLoadData_t)(CUmodule*, const void*); int (*cuModuleGetFunction_t)(CUfunction*, CUmodule, const char*);
int (*cuMemAlloc_v2_t)(CUdp*, size_t); int (*cuLaunchKernel_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**, void**);
int (*cuEventCreate_t)(CUevent*, unsigned); int (*cuEventRecord_t)(CUevent, void*); int (*cuEventSynchronize_t)(CUevent); int (*cuEventElapsedTime_t)(float*, CUevent, CUevent);
int (*cuMemcpyDtoDAsync_v2_t)(CUdp, CUdp, size_t, void*); int (*cuMemcpyHtoD_v2_t)(CUdp, const void*, size_t); int (*cuMemcpyDtoH_v2_t)(void*, CUdp, size_t);
int (*cuDeviceGetAttribute_t)(int*, int, int); int (*cuMemsetD8_v2_t)(CUdp, unsigned char, size_t); int (*cuCtxSynchronize_t)();
int (*nvrtcCreateProgram_t)(void**, const char*, const char*, int, const char* const*, const char* const*);
int (*nvrtcCompileProgram_t)(void*, int, const char* const*); int (*nvrtcGetCUBINSize_t)(void*, size_t*); int (*nvrtcGetCUBIN_t)(void*, char*);
int (*nvrtcGetProgramLogSize_t)(void*, size_t*); int (*nvrtcGetProgramLog_t)(void*, char*);
int main(int argc, char** argv) {
  void* cu = dlopen("libcuda.so.1", RTLD_NOW);
  void* nv = nullptr;
  for (const char* n : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) if ((nv = dlopen(n, RTLD_NOW))) break;
  if (!cu || !nv) { printf("no cuda/nvrtc\n"); return 1; }
  L(cu, cuInit) L(cu, cuDeviceGet) L(cu, cuDevicePrimaryCtxRetain) L(cu, cuCtxSetCurrent) L(cu, cuModuleLoadData) L(cu, cuModuleGetFunction)
  L(cu, cuMemAlloc_v2) L(cu, cuLaunchKernel) L(cu, cuEventCreate) L(cu, cuEventRecord) L(cu, cuEventSynchronize) L(cu, cuEventElapsedTime)
  L(cu, cuMemcpyDtoDAsync_v2) L(cu, cuMemcpyHtoD_v2) L(cu, cuMemcpyDtoH_v2) L(cu, cuDeviceGetAttribute) L(cu, cuMemsetD8_v2) L(cu, cuCtxSynchronize)
  L(nv, nvrtcCreateProgram) L(nv, nvrtcCompileProgram) L(nv, nvrtcGetCUBINSize) L(nv, nvrtcGetCUBIN) L(nv, nvrtcGetProgramLogSize) L(nv, nvrtcGetProgramLog)
  cuInit(0); int dev; cuDeviceGet(&dev, 0); CUctx ctx; cuDevicePrimaryCtxRetain(&ctx, dev); cuCtxSetCurrent(ctx);
  int sms, maj, min; cuDeviceGetAttribute(&sms, 16, dev); cuDeviceGetAttribute(&maj, 75, dev); cuDeviceGetAttribute(&min, 76, dev);
  std::ifstream in(argc > 1 ? argv[1] : "kernel_variants.cu"); std::stringstream ss; ss << in.rdbuf(); std::string src = ss.str();
  std::string arch = "--gpu-architecture=sm_" + std::to_string(maj * 10 + min);
  const char* opts[] = {arch.c_str(), "-std=c++17", "--restrict"};
  void* prog; nvrtcCreateProgram(&prog, src.c_str(), "kernel_variants.cu", 0, nullptr, nullptr);
  int rc = nvrtcCompileProgram(prog, 3, opts);
  size_t ls; nvrtcGetProgramLogSize(prog, &ls); std::string log(ls, 0); nvrtcGetProgramLog(prog, log.data());
  if (rc) { printf("compile failed: %s\n", log.c_str()); return 1; }
  size_t cs; nvrtcGetCUBINSize(prog, &cs); std::vector<char> cubin(cs); nvrtcGetCUBIN(prog, cubin.data());
  CUmodule mod; if (cuModuleLoadData(&mod, cubin.data())) { printf("load failed\n"); return 1; }
  const int n = 1 << 26; size_t bytes = (size_t)n * 4;
  CUdp x, y, part, counter, out; cuMemAlloc_v2(&x, bytes); cuMemAlloc_v2(&y, bytes); cuMemAlloc_v2(&part, 1 << 20); cuMemAlloc_v2(&counter, 4); cuMemAlloc_v2(&out, 4);
  cuMemsetD8_v2(counter, 0, 4);
  std::vector<float> h(n); srand(1); for (auto& v : h) v = (rand() / (float)RAND_MAX) * 2.f - 1.f;
  cuMemcpyHtoD_v2(x, h.data(), bytes);
  CUevent e0, e1; cuEventCreate(&e0, 0); cuEventCreate(&e1, 0);
  auto timeit = [&](auto launch) {
    for (int i = 0; i < 10; ++i) launch();
    float best = 1e9;
    for (int rep = 0; rep < 5; ++rep) {
      cuEventRecord(e0, nullptr); for (int i = 0; i < 100; ++i) launch(); cuEventRecord(e1, nullptr); cuEventSynchronize(e1);
      float ms; cuEventElapsedTime(&ms, e0, e1); if (ms / 100 < best) best = ms / 100; }
    return best; };
  float copy = timeit([&] { cuMemcpyDtoDAsync_v2(y, x, bytes, nullptr); });
  double floor_ms = copy;  // the copy moves the same bytes as a one-in one-out kernel
  printf("sms %d  sm_%d%d  memcpy DtoD %.4f ms (%.1f GB/s)\n", sms, maj, min, copy, 2.0 * bytes / copy / 1e6);
  int nn = n;
  auto ew = [&](const char* name, unsigned grid) {
    CUfunction f; if (cuModuleGetFunction(&f, mod, name)) { printf("no %s\n", name); return; }
    void* args[] = {&x, &y, &nn};
    float t = timeit([&] { cuLaunchKernel(f, grid, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr); });
    printf("%-10s grid %6u  %.4f ms  %.3fx copy\n", name, grid, t, t / floor_ms); };
  unsigned all = n / 4 / 256;
  for (const char* k : {"ew_copy", "ew_ieee", "ew_fast", "ews_ieee", "ews_fast"})
    for (unsigned g : {(unsigned)sms * 4, (unsigned)sms * 8, (unsigned)sms * 16, (unsigned)sms * 32, all}) ew(k, g);
  for (const char* k : {"ew2_ieee", "ew2_fast"}) for (unsigned g : {(unsigned)sms * 8, (unsigned)sms * 16, (unsigned)sms * 32}) ew(k, g);
  double ref = 0; for (float v : h) ref += (double)v * v;
  auto red = [&](const char* name, unsigned grid) {
    CUfunction f; if (cuModuleGetFunction(&f, mod, name)) { printf("no %s\n", name); return; }
    void* args[] = {&x, &part, &counter, &out, &nn};
    float t = timeit([&] { cuLaunchKernel(f, grid, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr); });
    float got; cuMemcpyDtoH_v2(&got, out, 4);
    printf("%-10s grid %6u  %.4f ms  %.3fx half-copy  sum %.6g (ref %.6g)\n", name, grid, t, t / (floor_ms / 2), got, ref); };
  for (const char* k : {"s_scalar", "s_scalar8", "s_vec1", "s_vec2", "s_vec4"})
    for (unsigned g : {(unsigned)sms * 2, (unsigned)sms * 4, (unsigned)sms * 8, (unsigned)sms * 16}) red(k, g);
  cuCtxSynchronize();
}
