#include "common.h"
__attribute__((noinline)) void kernel(double *restrict a, double *restrict b, double *restrict c, double s)
{
    for (long i = 0; i < N; ++i)
        a[i] = b[i] + s * c[i];
    __asm__ volatile("" ::: "memory");
}
int main(void)
{
    double *a = arr(N), *b = arr(N), *c = arr(N);
    TIME_IT(kernel(a, b, c, 0.5), N);
    return a[N / 2] == 12345.0;
}
