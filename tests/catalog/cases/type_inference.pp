# type() infers Puppet's detailed types: Tuple/Struct for collections, exact scalar ranges, Iterator and time types.
notify { 'a': message => type([]) }
notify { 'b': message => type({}) }
notify { 'c': message => type({'a' => 1, 'b' => 'x'}) }
notify { 'd': message => type(1.5) }
notify { 'e': message => type(true) }
notify { 'f': message => type(undef) }
notify { 'g': message => type(/re/) }
notify { 'h': message => type(Integer) }
notify { 'i': message => type(Sensitive('x')) }
notify { 'j': message => type([[1], {'k' => [2]}]) }
notify { 'k': message => type({1 => 'a'}) }
notify { 'l': message => type(default) }
notify { 'm': message => type(SemVerRange('>=1.0')) }
notify { 'n': message => type(File['/x']) }
notify { 'o': message => type('') }
notify { 'it_a': message => type(['a', 'bc'].reverse_each) }
notify { 'it_c': message => type(Timespan(1)) }
notify { 'it_d': message => type(Timestamp(0)) }
notify { 'it_f': message => type([].reverse_each) }
notify { 'it_g': message => type('abc') }
notify { 'it_h': message => type([1, 'a']) }
