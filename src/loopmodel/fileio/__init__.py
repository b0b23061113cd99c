"""Reading and writing user files: kernels, machine files, defines, study, application and result files."""
