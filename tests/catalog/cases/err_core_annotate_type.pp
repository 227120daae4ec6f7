# annotate with a type that is not an Annotation.
notice(annotate(String, 'x', {}))
