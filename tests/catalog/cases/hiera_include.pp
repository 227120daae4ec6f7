class hi_common { notify { 'hi_common': } }
class hi_debian { notify { 'hi_debian': } }
hiera_include('hi_classes')
