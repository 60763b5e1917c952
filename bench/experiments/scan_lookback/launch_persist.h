// The persistent kernel (extra.cuh): as many blocks as fit the GPU at once, each taking tiles in turn.
void launch(const float* x, float* y, long long n, char* scratch, cudaStream_t st) {
  const int smem = 2 * TILE * 4;
  static int blocks = [&] {
    cudaFuncSetAttribute(lf_scan_persist, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    cudaFuncSetAttribute(lf_scan_persist, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
    int per = 0, sms = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, lf_scan_persist, THREADS, smem);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    printf("persist: %d blocks an SM, %d SMs\n", per, sms);
    return per * sms;
  }();
  long long tiles = n / TILE;
  cudaMemsetAsync(scratch, 0, 16 + tiles * 8, st);
  lf_scan_persist<<<(unsigned)std::min<long long>(blocks, tiles), THREADS, smem, st>>>(x, y, tiles, (unsigned*)scratch, (u64*)(scratch + 16));
}
