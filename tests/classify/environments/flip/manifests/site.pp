notify { "site flip": }
