domain: "{ S_1[b = 0, z, i, j, ic = 0] : 0 <= z <= 2 and 0 <= i <= 2 and 0 <= j <= 2;"
          "S_0[b = 0, z, i, j] : 0 <= z <= 2 and 0 <= i <= 2 and 0 <= j <= 2 }"
child:
  schedule: "[{ S_1[b, z, i, j, ic] -> [(i)];"
               "S_0[b, z, i, j] -> [(i)] },"
             "{ S_1[b, z, i, j, ic] -> [(j)];"
               "S_0[b, z, i, j] -> [(j)] },"
             "{ S_1[b, z, i, j, ic] -> [(z)];"
               "S_0[b, z, i, j] -> [(z)] }]"
  permutable: 1
  coincident: [ 1, 1, 1 ]
  child:
    sequence:
    - filter: "{ S_0[b, z, i, j] }"
    - filter: "{ S_1[b, z, i, j, ic] }"
