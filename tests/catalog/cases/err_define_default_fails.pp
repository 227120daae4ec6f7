# A defined type's parameter default fails inside the declaring resource
# statement (postgresql::server::extension).
function corpuslang_fails() { fail('no default here') }
define corpuslang_thing($value = corpuslang_fails()) {}
corpuslang_thing { 'x': }
