unless $facts['kernel'] == 'Linux' { notify { 'not linux': } } else { notify { 'linux': } }
if $facts['is_virtual'] and $facts['processorcount'] > 1 { notify { 'virtual multi': } }
if !$facts['missing_fact'] { notify { 'no fact': } }
