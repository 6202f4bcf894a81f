import kopf

@kopf.on.create("pods")
def broken(**_)
    pass
