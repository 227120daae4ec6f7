# to_array_of_json_strings refuses text that is not JSON.
$j = to_array_of_json_strings('[{not json')
