# archive::parse_artifactory_url accepts only http(s) URLs.
$p = archive::parse_artifactory_url('ftp://h/artifactory/r/g/m/1.0/m-1.0.jar')
