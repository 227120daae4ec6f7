class ar (Array[Integer] $nums) {}
class { 'ar': nums => [1, 'two'] }
