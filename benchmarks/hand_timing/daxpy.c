#include "common.h"
__attribute__((noinline)) void kernel(double *restrict x, double *restrict y, double a)
{
    for (long i = 0; i < N; ++i)
        y[i] = a * x[i] + y[i];
    __asm__ volatile("" ::: "memory");
}
int main(void)
{
    double *x = arr(N), *y = arr(N);
    TIME_IT(kernel(x, y, 0.5), N);
    return y[N / 2] == 12345.0;
}
