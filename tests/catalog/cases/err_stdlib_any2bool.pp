# stdlib's any2bool hands a non-numeric string to str2bool, which knows only boolean words.
notice(any2bool('maybe'))
