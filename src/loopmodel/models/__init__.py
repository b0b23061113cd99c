"""Performance models: in-core, ECM, Roofline, saturation and scaling, power, coherence, applications."""
