# nova's to_array_of_json_strings: hashes (or JSON text of one hash or an
# array of them; single quotes accepted) as compact JSON strings.
$cases = [
  [{ 'b' => 1, 'a' => [true, undef, 1.5, 'x"y'] }, {}],
  '[{"z": 1, "a": {"n": null}}, {"k": "v"}]',
  '{"single": 2}',
  "[{'q': 'single quotes'}]",
]
$cases.each |$i, $c| {
  notify { "json ${i}": message => String(to_array_of_json_strings($c)) }
}
