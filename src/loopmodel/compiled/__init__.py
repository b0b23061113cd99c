"""In-core analysis of the compiled kernel: code generation, compilation,
innermost-loop detection in assembly and analyzer back-ends (kerncraft-tool-paper.txt
§2.3 "ECM", §2.5; cross-architecture paper §3.4.1)."""
