# The deprecated strftime(String format, String timezone?) form formats
# the current time; only directives that do not vary are shown.
notify { 'literal': message => strftime('literal %% text') }
notify { 'zone': message => strftime('%z', '+03:00') }
notify { 'year length': message => strftime('%Y').size }
