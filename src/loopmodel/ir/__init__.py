"""The pure-data descriptions of what is modelled: kernels, applications, OpenMP programs, polynomials."""
