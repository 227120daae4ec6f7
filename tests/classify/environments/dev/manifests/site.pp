notify { "site dev for ${trusted['certname']}": }
