# annotate with one argument.
notice(annotate(String))
