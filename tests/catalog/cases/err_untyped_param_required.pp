# Every parameter without a default is required, an untyped one too
# (congress::keystone::authtoken's `$password`).
class needs_untyped ($password) {}
include needs_untyped
