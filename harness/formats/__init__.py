"""One module per spec: constants, canonical form, validators' helpers, strategies, equivalence."""
