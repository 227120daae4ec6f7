$words = shell_split('a', 'b')
