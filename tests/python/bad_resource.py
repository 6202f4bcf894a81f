import kopf

@kopf.on.create("example.com", "v1", "websites")
def f(**_):
    pass
