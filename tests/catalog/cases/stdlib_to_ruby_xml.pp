# stdlib's to_ruby, to_python and stdlib::xml_encode (issue 14).
$data = { 'a' => [1, 2.5, true, false, undef], 'b"c' => "x'y\n", 'n' => { 'k' => 'v' } }
notify { 'to_ruby': message => to_ruby($data) }
notify { 'to_python': message => to_python($data) }
notify { 'to_ruby-str': message => to_ruby('plain') }
notify { 'to_python-undef': message => to_python(undef) }
notify { 'to_ruby-float': message => to_ruby(1.0e20) }
notify { 'xml_encode': message => stdlib::xml_encode('a < b & "c" > d') }
notify { 'xml_encode-attr': message => stdlib::xml_encode('a < b & "c"', 'attr') }
