# Deep merge options in lookup_options: knockout_prefix, sort_merged_arrays, merge_hash_arrays.
notify { 'ko': message => lookup('lo_dm_ko') }
notify { 'sort': message => lookup('lo_dm_sort') }
notify { 'mha': message => lookup('lo_dm_mha') }
notify { 'explicit': message => lookup('lo_dm_ko', Hash, { 'strategy' => 'deep', 'knockout_prefix' => 'xx' }) }
