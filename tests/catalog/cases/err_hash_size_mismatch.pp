# A hash whose values fit but whose size does not.
class sized(Hash[String, String, 1] $tables) { }
class { 'sized': tables => {} }
