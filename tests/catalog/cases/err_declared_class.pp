# A resource-like declaration of a class nobody defines names it as written.
class { '::Nosuchmodule::Missing': }
