import kopf

# apps serves no websites: a resource of a built-in group that does not exist is the file's
# error (a group nothing built in has would be a custom resource still to come).
@kopf.on.create("apps", "v1", "websites")
def f(**_):
    pass
