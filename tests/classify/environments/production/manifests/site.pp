notify { "site production for ${trusted['certname']}": }
