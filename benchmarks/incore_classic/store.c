/* store (initialisation): a[i] = s */
double a[N];
double s;

for (int i = 0; i < N; ++i)
    a[i] = s;
