node /^web\d+$/ { notify { 'web': } }
node /^node(\d+)$/ { notify { "numbered ${1}": } }
