notify { "site flop": }
