/* PCG: daxpby y[i] = a*x[i] + b*y[i] over the whole grid (§5.1): two loads, one FMA, one
   multiplication, one store. */
double x[NN], y[NN];
double a, b;

for (int i = 0; i < NN; ++i)
    y[i] = a * x[i] + b * y[i];
