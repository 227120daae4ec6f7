# archive::parse_artifactory_url: the parts of an Artifactory artifact URL
# (undef parts where the URL lacks them), undef for other URLs.
$urls = [
  'https://repo.example.com/artifactory/libs-release/com/example/app/1.2.3/app-1.2.3.jar',
  'https://repo.example.com/artifactory/libs-snapshot/org/x/y/lib/2.0-SNAPSHOT/lib-2.0-20240101.123456-7-sources.tar.gz',
  'http://h/artifactory/r/g/m/1.0-SNAPSHOT/m-1.0-SNAPSHOT.zip',
  'https://h/artifactory/r/g/m/1.0/m-1.0-bin.7z',
  'https://h/artifactory/r/g/m/1.0/other-1.0.jar',
  'HTTPS://h/nothing/here.jar',
]
$urls.each |$i, $u| {
  notify { "url ${i}": message => String(archive::parse_artifactory_url($u)) }
}
