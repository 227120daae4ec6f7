type Mymod::Mode = Enum['fast', 'slow']
