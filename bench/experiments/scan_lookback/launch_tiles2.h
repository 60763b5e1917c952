// The look-back warp kernel (lbwarp.cuh): THREADS item threads and one more warp, one line.
void launch(const float* x, float* y, long long n, char* scratch, cudaStream_t st) {
  static bool once = (cudaFuncSetAttribute(lf_scan_tiles2, cudaFuncAttributePreferredSharedMemoryCarveout, 100), cudaFuncSetAttribute(lf_scan_tiles2, cudaFuncAttributeMaxDynamicSharedMemorySize, LB_SMEM), true);
  (void)once;
  long long tile = (long long)THREADS * ITEMS, tiles = (n + tile - 1) / tile;
  size_t values_at = 16 + tiles * 8;
  cudaMemsetAsync(scratch, 0, values_at, st);
  lf_scan_tiles2<<<tiles, THREADS + 32, LB_SMEM, st>>>(x, y, 1, n, n, 1, 1, tiles, (unsigned*)scratch, (u64*)(scratch + 16),
                                       (float*)(scratch + values_at), (float*)(scratch + values_at + tiles * 16));
}
