import kopf

@kopf.daemon("pods")
def d(**_):
    pass
