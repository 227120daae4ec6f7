# validate_yum_hash names the first parameter yumrepo does not have.
validate_yum_hash({ 'r' => { 'baseurl' => 'http://x', 'gpg_key' => 'k' } })
