# The project's own plan: `ferry plan run local` in (or with --project) the project.
plan local(TargetSpec $targets) {
  return run_command('echo polo', $targets)
}
