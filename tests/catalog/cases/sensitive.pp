$secret = Sensitive('s3cret')
user { 'svc': password => $secret }
