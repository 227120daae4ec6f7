# to_array_of_json_strings needs an array of hashes.
$j = to_array_of_json_strings([{ 'a' => 1 }, 'b'])
