#include "common.h"
__attribute__((noinline)) void kernel(double (*restrict a)[N], double (*restrict b)[N], double s)
{
    for (long j = 1; j < M - 1; ++j)
        for (long i = 1; i < N - 1; ++i)
            b[j][i] = (a[j][i - 1] + a[j][i + 1] + a[j - 1][i] + a[j + 1][i]) * s;
    __asm__ volatile("" ::: "memory");
}
int main(void)
{
    double (*a)[N] = (double (*)[N])arr((size_t)M * N), (*b)[N] = (double (*)[N])arr((size_t)M * N);
    TIME_IT(kernel(a, b, 0.25), (double)(M - 2) * (N - 2));
    return b[M / 2][N / 2] == 12345.0;
}
